import { useState } from "preact/hooks";
import { mfaHeaders, type Schemas } from "../api";
import { ConfirmButton } from "../components/confirm-button";
import { Copyable, CopyButton } from "../components/copy";
import { DialogButton } from "../components/dialog";
import * as field from "../components/fields";
import { Form } from "../components/form";
import { Page, Section } from "../components/layout";
import { Pager } from "../components/pager";
import { Pill } from "../components/pill";
import { Show } from "../components/show";
import { Table } from "../components/table";
import * as format from "../format";
import { useLoad } from "../hooks/use-load";
import { usePagedList } from "../hooks/use-paged";
import { addPasskey, passkeysSupported, suggestedPasskeyName } from "../passkeys";
import type { PageEntry } from "../router";
import { type Session, setOwnMfa, useSession } from "../session";

export const securityPage: PageEntry = { label: "Security", area: "own", component: SecurityPage };

/** The signed-in member's own sign-in: two-step verification (TOTP), passkeys and the password. */
function SecurityPage() {
  return (
    <Page title="Security">
      <TwoStep />
      <Passkeys />
      <ChangePassword />
    </Page>
  );
}

type Enrollment = Schemas["MfaEnrollment"];

/** The code field of the dialogs that need a current one (turning off, setting up again). */
const currentCode = () => ({
  code: field.text("Current code", {
    required: true,
    autoComplete: "one-time-code",
    hint: "From your authenticator app, or one of your recovery codes.",
  }),
});

/**
 * TOTP: off → set up (the secret, a first code to confirm) → the recovery codes shown once → on. When on, turning
 * it off or setting it up again (a new app) asks for a current code.
 */
function TwoStep() {
  const session = useSession();
  const { client } = session;
  const status = useLoad(() => client.get("/auth/session"), []);
  // A pending enrollment (its secret on screen), then its recovery codes once confirmed.
  const [enrollment, setEnrollment] = useState<Enrollment | null>(null);
  const [confirmed, setConfirmed] = useState<string[] | null>(null);
  const enabled = status.data?.member.mfa_enabled ?? false;
  const enroll = async (code?: string) => {
    setConfirmed(null);
    setEnrollment(await client.post("/auth/mfa", { body: { method: "totp" }, headers: mfaHeaders(code) }));
  };
  return (
    <Section title="Two-step verification">
      <Show state={status}>
        {() =>
          confirmed ? (
            <RecoveryCodes
              codes={confirmed}
              onDone={() => {
                setConfirmed(null);
                status.reload();
              }}
            />
          ) : enrollment ? (
            <ConfirmEnrollment
              enrollment={enrollment}
              session={session}
              onCancel={() => setEnrollment(null)}
              onConfirmed={() => {
                setConfirmed(enrollment.recovery_codes);
                setEnrollment(null);
              }}
            />
          ) : enabled ? (
            <>
              <p>
                <Pill tone="good">On</Pill> Signing in with your password asks for a code from your authenticator app
                too, and so do the actions that need a second factor.
              </p>
              <div class="actions">
                <ConfirmButton
                  label="Set up again"
                  title="Set up two-step verification again"
                  body={<p>For a new authenticator app: the current one and your recovery codes stop working.</p>}
                  fields={currentCode()}
                  confirmLabel="Continue"
                  run={({ code }) => enroll(code.trim())}
                  onDone={() => undefined}
                />
                <ConfirmButton
                  label="Turn off"
                  title="Turn off two-step verification"
                  danger
                  body={<p>Your password alone signs you in again; your recovery codes are deleted.</p>}
                  fields={currentCode()}
                  confirmLabel="Turn off"
                  run={({ code }) => client.delete("/auth/mfa", { headers: mfaHeaders(code.trim()) })}
                  onDone={() => {
                    setOwnMfa(session, false);
                    status.reload();
                  }}
                />
              </div>
            </>
          ) : (
            <>
              <p>
                <Pill tone="warn">Off</Pill> Your password alone signs you in. Add a code from an authenticator app (any
                TOTP app) so that a stolen password is not enough.
              </p>
              <Form submitLabel="Set up" submit={() => enroll()} onDone={() => undefined} />
            </>
          )
        }
      </Show>
    </Section>
  );
}

function ConfirmEnrollment(props: {
  enrollment: Enrollment;
  session: Session;
  onCancel: () => void;
  onConfirmed: () => void;
}) {
  const { enrollment, session } = props;
  return (
    <div class="enrollment">
      <ol>
        <li>
          In your authenticator app, add an account with this secret key (or open the link on a device that has the
          app).
          <Copyable label="Secret key" value={enrollment.secret} />
          <Copyable label="Setup link" value={enrollment.otpauth_uri} />
          <a href={enrollment.otpauth_uri}>Open in an authenticator app</a>
        </li>
        <li>Type the 6-digit code the app shows to turn two-step verification on.</li>
      </ol>
      <Form
        fields={{
          code: field.text("Code from the app", {
            required: true,
            pattern: "\\s*\\d{6}\\s*",
            title: "The 6 digits your authenticator app shows",
            autoComplete: "one-time-code",
          }),
        }}
        submitLabel="Turn on"
        submit={({ code }) => session.client.post("/auth/mfa/verify", { body: { code: code.trim() } })}
        onDone={() => {
          setOwnMfa(session, true);
          props.onConfirmed();
        }}
      />
      <button type="button" class="link" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** The recovery codes, shown once right after two-step verification is turned on. */
function RecoveryCodes(props: { codes: string[]; onDone: () => void }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>Two-step verification is on. Save these recovery codes now</strong> — they are shown only once. Each one
        signs you in once in place of a code if you lose your authenticator app: keep them somewhere safe, apart from
        your password.
      </p>
      <ul class="recovery-codes" aria-label="Recovery codes">
        {props.codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <CopyButton text={props.codes.join("\n")} label="the recovery codes" />
        <button type="button" class="primary" onClick={props.onDone}>
          I saved them
        </button>
      </div>
    </div>
  );
}

/** The member's passkeys: added here (the browser's ceremony), listed, removed. */
function Passkeys() {
  const { client } = useSession();
  const passkeys = usePagedList({}, (_filters, page) => client.get("/auth/passkeys", { params: { query: page } }));
  const supported = passkeysSupported();
  return (
    <Section
      title="Passkeys"
      actions={
        supported ? (
          <DialogButton label="Add a passkey" tone="primary">
            {(close) => (
              <Form
                fields={{
                  name: field.text("Name", {
                    required: true,
                    value: suggestedPasskeyName(),
                    hint: "To tell your passkeys apart, e.g. the device or password manager that keeps it.",
                  }),
                }}
                submitLabel="Create the passkey"
                submit={({ name }) => addPasskey(client, name.trim())}
                onDone={() => {
                  close();
                  passkeys.reload();
                }}
              >
                <p class="muted">Your browser asks you to unlock the device (fingerprint, face, PIN or password).</p>
              </Form>
            )}
          </DialogButton>
        ) : null
      }
    >
      <p class="muted">
        A passkey signs you in with your device's fingerprint, face or PIN: no password and no code to type.
      </p>
      {supported ? null : (
        <p class="notice" role="status">
          Passkeys are not supported by this browser: use a recent Chrome, Edge, Safari or Firefox to add one or to sign
          in with one.
        </p>
      )}
      <Show state={passkeys} empty={(page) => page.data.length === 0} emptyText="No passkeys yet.">
        {(page) => (
          <>
            <Table
              caption="Passkeys"
              rows={page.data}
              rowKey={(one) => one.id}
              columns={[
                { label: "Name", render: (p) => p.name },
                { label: "Added", render: (p) => format.time(p.created_at) },
                { label: "Last used", render: (p) => (p.last_used_at ? format.relative(p.last_used_at) : "never") },
                {
                  label: "Synced",
                  render: (p) => (p.backed_up ? <Pill tone="info">yes</Pill> : <Pill>no, this device only</Pill>),
                },
                {
                  label: "",
                  render: (p) => (
                    <ConfirmButton
                      label="Remove"
                      title={`Remove ${p.name}`}
                      danger
                      body={
                        <p>
                          It signs you in no more. Remove it from the device or password manager too; sessions it opened
                          stay until they end.
                        </p>
                      }
                      confirmLabel="Remove"
                      run={() => client.delete("/auth/passkeys/{id}", { params: { path: { id: p.id } } })}
                      onDone={passkeys.reload}
                    />
                  ),
                },
              ]}
            />
            <Pager paging={passkeys.paging} noun="passkeys" />
          </>
        )}
      </Show>
    </Section>
  );
}

function ChangePassword() {
  const { client } = useSession();
  const [changed, setChanged] = useState(false);
  return (
    <Section title="Password">
      {changed ? (
        <p class="success" role="status">
          Your password is changed. Your other sessions have ended; this one stays.
        </p>
      ) : null}
      <Form
        key={String(changed)}
        fields={{
          current_password: field.secret("Current password", { required: true, autoComplete: "current-password" }),
          new_password: field.secret("New password", {
            required: true,
            minLength: 10,
            autoComplete: "new-password",
            hint: "At least 10 characters. A few words make a strong one.",
          }),
        }}
        submitLabel="Change the password"
        submit={(body) => client.post("/auth/password", { body })}
        onDone={() => setChanged(true)}
      />
    </Section>
  );
}
