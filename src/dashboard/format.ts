// How the dashboard writes numbers, sizes, times and payload bytes.

/** Digits grouped by threes with a narrow no-break space (base units stay exact: no rounding, no unit conversion). */
export function groupDigits(value: number | bigint | string): string {
  const text = String(value);
  const negative = text.startsWith("-");
  const digits = negative ? text.slice(1) : text;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f");
  return negative ? `-${grouped}` : grouped;
}

const SIZE_UNITS = ["B", "kB", "MB", "GB", "TB"];

/** Bytes in powers of 1000 (as --prune-size reads them), three significant digits. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < SIZE_UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toPrecision(3)} ${SIZE_UNITS[unit]}`;
}

/** A rate with at most one decimal. */
export function formatRate(value: number): string {
  return value >= 100 ? String(Math.round(value)) : String(Math.round(value * 10) / 10);
}

/** Hashes per second with a unit prefix. */
export function formatHashRate(rate: number): string {
  if (rate >= 1e6) return `${(rate / 1e6).toFixed(2)} MH/s`;
  if (rate >= 1e3) return `${(rate / 1e3).toFixed(1)} kH/s`;
  return `${Math.round(rate)} H/s`;
}

/** Unix seconds as an ISO time in UTC, to the second. */
export function formatTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** How long ago, in the largest whole unit. */
export function formatAge(unixSeconds: number, now = Date.now() / 1000): string {
  const seconds = Math.max(0, Math.round(now - unixSeconds));
  if (seconds < 120) return `${seconds} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** The bytes as text when they are valid UTF-8 without control characters (tabs and newlines allowed), else undefined. */
export function printable(hex: string): string | undefined {
  if (hex.length === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(hexToBytes(hex));
  } catch {
    return undefined;
  }
  return /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/.test(text) ? undefined : text;
}
