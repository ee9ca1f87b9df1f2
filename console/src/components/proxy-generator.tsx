import { useState } from "preact/hooks";
import type { GatewayProduct, Schemas } from "../api";
import { useAction } from "../hooks/use-action";
import type { NonEmpty } from "../lib/non-empty";
import { curlLine, gatewayUsername, type ProxyTarget, proxyLine, rotatingTarget, targetProblem } from "../proxy-string";
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
  const pass = password || "PASSWORD";
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
        </div>
      ) : (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </Section>
  );
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
