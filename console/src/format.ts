/** How the console writes numbers and times: decimal units (a GB is 10^9 bytes, as the API counts). */

const BYTE_UNITS = ["B", "KB", "MB", "GB", "TB", "PB"];

export function bytes(value: number): string {
  let unit = 0;
  let scaled = value;
  while (Math.abs(scaled) >= 1000 && unit < BYTE_UNITS.length - 1) {
    scaled /= 1000;
    unit++;
  }
  return `${unit === 0 ? scaled : scaled.toFixed(scaled < 10 ? 2 : 1)} ${BYTE_UNITS[unit]}`;
}

export function gb(value: number): string {
  return `${value.toLocaleString("en-US", { maximumFractionDigits: 3 })} GB`;
}

export function count(value: number): string {
  return value.toLocaleString("en-US");
}

export function usd(value: number | null): string {
  return value === null ? "—" : value.toLocaleString("en-US", { style: "currency", currency: "USD" });
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(fraction > 0 && fraction < 0.01 ? 2 : 1)}%`;
}

/** A timestamp as `2026-11-20 14:05 UTC`: the API's times are UTC, and so are the console's. */
export function time(iso: string | null): string {
  if (!iso) return "—";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** `in about 12 days`, `in about 5 hours`, `about 3 minutes ago`, `about 1 minute ago`. */
export function relative(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  const [amount, unit] =
    abs >= 2 * 86_400_000
      ? [Math.round(abs / 86_400_000), "days"]
      : abs >= 2 * 3_600_000
        ? [Math.round(abs / 3_600_000), "hours"]
        : [Math.max(1, Math.round(abs / 60_000)), "minutes"];
  const span = `${amount} ${amount === 1 ? unit.slice(0, -1) : unit}`;
  return ms >= 0 ? `in about ${span}` : `about ${span} ago`;
}
