import { useState } from "preact/hooks";
import {
  PASSWORD_PLACEHOLDER,
  type ProxyListFormat,
  type ProxyProtocol,
  proxyListFormats,
  proxyProtocols,
} from "../../../src/domain/gateway/proxy-lines";
import { ApiError, type GatewayProduct, type Schemas } from "../api";
import { useAction } from "../hooks/use-action";
import type { NonEmpty } from "../lib/non-empty";
import {
  curlLine,
  gatewayUsername,
  type ProxyTarget,
  proxyLine,
  proxyListQuery,
  rotatingTarget,
  targetProblem,
  withPassword,
} from "../proxy-string";
import { useSession } from "../session";
import { Copyable } from "./copy";
import { ErrorNote } from "./error-note";
import { Section } from "./layout";
import { Pill } from "./pill";
import { Choice } from "./select";

/** The proxy-string generator: country, state, city, ASN, session → the username, `host:port:user:pass`, curl. */
export function ProxyGenerator(props: { subuser: Schemas["Subuser"]; products: NonEmpty<GatewayProduct> }) {
  const { subuser, products } = props;
  const session = useSession();
  const { gateway, can } = session;
  const [target, setTarget] = useState<ProxyTarget>(rotatingTarget(products[0]));
  const [password, setPassword] = useState(session.shownPasswords.get(subuser.id) ?? "");
  const typed = (name: Exclude<keyof ProxyTarget, "product">) => ({
    value: target[name],
    onInput: (event: { currentTarget: HTMLInputElement }) =>
      setTarget({ ...target, [name]: event.currentTarget.value }),
  });
  const problem = targetProblem(target, gateway);
  const username = problem ? null : gatewayUsername(subuser.name, target, gateway.username_prefix);
  const pass = password || PASSWORD_PLACEHOLDER;
  return (
    <Section title="Proxy string">
      <form class="generator" onSubmit={(event) => event.preventDefault()}>
        <Choice
          label="Product"
          value={target.product}
          options={products}
          onChange={(product) => setTarget({ ...target, product })}
        />
        <label>
          Country
          <input {...typed("country")} maxLength={2} placeholder="us" />
        </label>
        <label>
          State
          <input {...typed("state")} maxLength={3} placeholder="ca (optional)" />
        </label>
        <label>
          City
          <input {...typed("city")} maxLength={40} placeholder="losangeles (optional)" />
        </label>
        <label>
          ASN
          <input {...typed("asn")} inputMode="numeric" placeholder="optional" />
        </label>
        <label>
          Session
          <input {...typed("session")} maxLength={32} placeholder="sticky id (optional)" />
        </label>
        <label>
          Session time (min)
          <input {...typed("sesstime")} inputMode="numeric" disabled={!target.session} />
        </label>
        <label>
          Password
          <input
            type="password"
            value={password}
            autoComplete="off"
            placeholder="shown at creation or rotation"
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
      </form>
      {username ? (
        <div class="strings" data-testid="proxy-strings">
          <Copyable label="Username" value={username} />
          <Copyable label="host:port:user:pass" value={proxyLine(gateway, username, pass)} />
          <Copyable label="curl" value={curlLine(gateway, username, pass)} />
          <p class="muted">
            {target.session
              ? `Sticky: the same exit IP for ${target.sesstime} minutes from the first request.`
              : "Rotating: every new connection gets a new exit IP."}
            {session.sandbox ? " Sandbox sub-users are not served by the gateway: test the string here instead." : ""}
          </p>
          {password && can("subusers", "write") ? <ProxyTest username={username} password={password} /> : null}
          <ProxyListDownload subuser={subuser} target={target} password={password} />
        </div>
      ) : (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </Section>
  );
}

const SESSION_KINDS = ["sticky", "rotating"] as const;

/**
 * The API's proxy list of the generator's product and geo, saved as a file: sticky lines are new sessions of the
 * generator's session time. The API's lines carry a placeholder for the password; the one typed above is put in here,
 * in the browser, so it never travels to the API.
 */
function ProxyListDownload(props: { subuser: Schemas["Subuser"]; target: ProxyTarget; password: string }) {
  const { client } = useSession();
  const [sessions, setSessions] = useState<(typeof SESSION_KINDS)[number]>("sticky");
  const [count, setCount] = useState("100");
  const [format, setFormat] = useState<ProxyListFormat>("txt");
  const [protocol, setProtocol] = useState<ProxyProtocol>("http");
  const { run, busy, error } = useAction();
  const sticky = sessions === "sticky";
  const download = () =>
    run(async () => {
      const query = proxyListQuery(props.target, { sticky, count: Number(count), format, protocol });
      const { data, error, response } = await client.raw.GET("/subusers/{id}/proxy-list", {
        params: { path: { id: props.subuser.id }, query },
        parseAs: "text",
      });
      if (!response.ok || data === undefined) throw new ApiError(response, error);
      const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") ?? "")?.[1] ?? "proxies.txt";
      const list = props.password ? withPassword(data, format, props.password) : data;
      saveFile(name, new Blob([list], { type: response.headers.get("Content-Type") ?? "text/plain" }));
    });
  return (
    <div class="proxy-list">
      <form class="generator" onSubmit={(event) => event.preventDefault()}>
        <Choice label="List sessions" value={sessions} options={SESSION_KINDS} onChange={setSessions} />
        {sticky ? (
          <label>
            Lines
            <input
              type="number"
              min={1}
              max={10000}
              value={count}
              onInput={(event) => setCount(event.currentTarget.value)}
            />
          </label>
        ) : null}
        <Choice label="List format" value={format} options={proxyListFormats} onChange={setFormat} />
        {format === "url" ? (
          <Choice label="Protocol" value={protocol} options={proxyProtocols} onChange={setProtocol} />
        ) : null}
      </form>
      <button type="button" class="small" disabled={busy} aria-busy={busy} onClick={() => void download()}>
        {busy ? "Preparing…" : "Download list"}
      </button>
      <p class="muted">
        {props.password
          ? "The lines carry the password above."
          : `The lines carry ${PASSWORD_PLACEHOLDER} where the password goes: type the password above to have it filled in.`}
      </p>
      {error ? <ErrorNote error={error} /> : null}
    </div>
  );
}

function saveFile(name: string, file: Blob) {
  const url = URL.createObjectURL(file);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** One request through the gateway with the generated string (the API's proxy test; in the sandbox, simulated). */
function ProxyTest(props: { username: string; password: string }) {
  const { client } = useSession();
  const [result, setResult] = useState<Schemas["ProxyTestResult"] | null>(null);
  const { run, busy, error } = useAction();
  const test = () =>
    run(async () => {
      setResult(
        await client.post("/tools/proxy-test", {
          body: { username: props.username, password: props.password, protocol: "http" },
        }),
      );
    });
  return (
    <div class="proxy-test">
      <button type="button" class="small" disabled={busy} aria-busy={busy} onClick={() => void test()}>
        {busy ? "Testing…" : "Test this string"}
      </button>
      {result ? (
        <p role="status" data-testid="proxy-test">
          {result.auth_ok ? (
            <Pill tone="good">accepted</Pill>
          ) : (
            <Pill tone="bad">{result.error_code ?? "refused"}</Pill>
          )}{" "}
          {result.exit_ip ? `exit ${result.exit_ip}` : ""}
          {result.status !== null ? ` · HTTP ${result.status}` : ""}
        </p>
      ) : null}
      {error ? <ErrorNote error={error} /> : null}
    </div>
  );
}
