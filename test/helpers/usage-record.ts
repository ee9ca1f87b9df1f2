// Usage records for tests: pure, so the gateway's own tests (Node) build records with it as the API's (workerd) do.

let counter = 0;

export type RecordFields = Record<string, unknown>;

/** A usage record as the gateway reports it; every field can be overridden. */
export function usageRecord(username: string, fields: RecordFields = {}): RecordFields {
  counter++;
  return {
    request_id: `req_test${Date.now().toString(36)}${counter}`,
    ts: new Date().toISOString(),
    product: "residential",
    username,
    dest_ip: null,
    method: "GET",
    target_host: "example.com",
    status: 200,
    bytes_in: 1000,
    bytes_out: 100,
    exit_ip: "203.0.113.5",
    exit_geo: "us/ca/la",
    exit_asn: 7922,
    carrier_name: null,
    tag: null,
    error_code: null,
    repinned: false,
    client_ip: "198.51.100.23",
    ...fields,
  };
}
