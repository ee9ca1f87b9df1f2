/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled; lines end with CRLF. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV line of `fields`, CRLF-terminated. */
export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}
