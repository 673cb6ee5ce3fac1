/** ISO 8601 in UTC with milliseconds, the service's one time format. */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
