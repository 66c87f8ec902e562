/** An error said aloud to assistive technology (role alert); nothing when there is none. */
export function Failure(props: { error: string | undefined }) {
  return props.error === undefined ? null : (
    <p role="alert" class="error">
      {props.error}
    </p>
  );
}
