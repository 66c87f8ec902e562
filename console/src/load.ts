import { useEffect, useState } from 'preact/hooks';

/** Runs `load` when `deps` change; keeps the last value while a reload runs. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [state, setState] = useState<{ value?: T; error?: string; loading: boolean }>({ loading: true });
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (value) => live && setState({ value, loading: false }),
      (e: unknown) => live && setState((s) => ({ ...s, error: (e as Error).message, loading: false })),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return state;
}
