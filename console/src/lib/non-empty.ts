/** A list with at least one item (a select starts at its first). */
export type NonEmpty<T> = readonly [T, ...T[]];

export function isNonEmpty<T>(list: readonly T[]): list is NonEmpty<T> {
  return list.length > 0;
}
