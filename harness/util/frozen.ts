// A value that no one handed it can change: every field readonly, all the way down (functions and class
// instances with methods keep their methods; a Map is read-only too).

/** `T` with every field, element and entry readonly, at every depth (a tuple stays a tuple). */
export type Frozen<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<K, Frozen<V>>
    : T extends object
      ? { readonly [K in keyof T]: Frozen<T[K]> }
      : T;

/** A copy of a frozen value that its new owner may change (a deep copy: the frozen value stays as it was). */
export function thawed<T>(value: Frozen<T>): T {
  return structuredClone(value) as T;
}
