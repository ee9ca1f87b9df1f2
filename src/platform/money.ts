/** Money is stored as integer minor units (cents); the API shows decimal amounts. */
export type Minor = number;

export function toMinor(amount: number): Minor {
  return Math.round(amount * 100);
}

export function fromMinor(minor: Minor): number {
  return minor / 100;
}

/** True when `amount` has at most two decimals (so it converts to cents exactly). */
export function hasCentPrecision(amount: number): boolean {
  return Math.abs(amount * 100 - Math.round(amount * 100)) < 1e-6;
}
