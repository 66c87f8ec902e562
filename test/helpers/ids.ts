/** An RFC 9562 version-7 UUID (time-ordered), as the service makes the ids of rows it appends. */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
