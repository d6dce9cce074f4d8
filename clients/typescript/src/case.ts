/** camelCase for callers, snake_case on the wire: one generic conversion each way, typed. */

export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** A wire type with every key in camelCase (recursively). */
export type Camelize<T> = T extends readonly (infer U)[]
  ? Camelize<U>[]
  : T extends object
    ? { [K in keyof T as K extends string ? CamelCase<K> : K]: Camelize<T[K]> }
    : T;

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Keys renamed recursively; the values of `context` objects (the caller's own JSON) are left as they are. */
function rename(value: unknown, how: (key: string) => string, opaque: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rename(v, how, opaque));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const name = how(key);
    out[name] = opaque.has(key) || opaque.has(name) ? inner : rename(inner, how, opaque);
  }
  return out;
}

const OPAQUE = new Set(["context", "fusion"]);

export const toWire = (value: unknown): unknown => rename(value, snake, OPAQUE);
export const fromWire = (value: unknown): unknown => rename(value, camel, OPAQUE);
