/** Money is stored as integer minor units (cents); the API shows decimal amounts. */
export type Minor = number;

export function toMinor(amount: number): Minor {
  return Math.round(amount * 100);
}

export function fromMinor(minor: Minor): number {
  return minor / 100;
}
