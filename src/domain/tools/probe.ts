// What a gateway probe is: shared by the real probe (over sockets), the sandbox's simulated one and the tests tool.

export type ProbeProtocol = "http" | "socks5";

/** One proxied request to make through the gateway. The password lives only in this object, for this call. */
export interface ProbeRequest {
  username: string;
  password: string;
  protocol: ProbeProtocol;
  /** Where the proxied request goes (http: or https:). */
  target: URL;
  timeoutMs: number;
}

export interface ProbeExit {
  ip: string;
  country: string;
  state: string | null;
  city: string | null;
  asn: number | null;
}

/** What the gateway answered, and how long each phase took. */
export interface ProbeOutcome {
  /** 200 when the gateway admitted the request, else its refusal status; null when it never answered. */
  status: number | null;
  /** The gateway's `X-Service-Error-Code`, or the probe's own: `gateway-unreachable`, `timeout`, `protocol-error`. */
  errorCode: string | null;
  serviceCode: number | null;
  retryAfterS: number | null;
  exit: ProbeExit | null;
  /** The target's HTTP status, when the proxied request got that far. */
  targetStatus: number | null;
  latencyMs: { connect: number | null; tls: number | null; ttfb: number | null; total: number };
}

/** Makes a proxied request through the gateway and reports what happened. */
export interface GatewayProbe {
  run(request: ProbeRequest): Promise<ProbeOutcome>;
}
