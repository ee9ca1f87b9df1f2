/** `value` when it is one of `options` (an address's query can hold anything), else `fallback`. */
export function oneOf<T extends string>(value: string, options: readonly T[], fallback: T): T {
  return options.find((option) => option === value) ?? fallback;
}
