// What a deployment needs beyond wrangler.toml: the worker's secrets, and the settings each team must make its own.
// `npm run deploy` checks both (scripts/deploy.mjs); docs/deploy.md explains them.

/**
 * The worker's secrets (`wrangler secret put NAME`). A required one missing stops a deploy; an optional one missing
 * leaves its feature off (the API answers that feature's requests with a clear failure, never a crash).
 */
export const SECRETS = [
  {
    name: "ADMIN_TOKEN",
    required: true,
    purpose: "bearer token of the admin API (accounts, API keys, prices), held by your dashboard and operators",
    value: "a long random string you keep, e.g. from `openssl rand -hex 32`",
  },
  {
    name: "GATEWAY_TOKEN",
    required: true,
    purpose: "bearer token of the gateway contract (access decisions, usage), held by the proxy gateway",
    value: "a long random string you keep, e.g. from `openssl rand -hex 32`",
  },
  {
    name: "SEALING_KEY",
    required: true,
    purpose: "seals MFA, webhook and report secrets and batch passwords at rest, and signs download links",
    value: "32 random bytes, base64; never change it once data exists (sealed values would no longer open)",
    generate: "openssl rand -base64 32",
  },
  {
    name: "PASSWORD_PEPPER",
    required: true,
    purpose: "peppers members' password hashes (an HMAC before PBKDF2): a stolen database alone cannot be cracked",
    value:
      "`1:` then 32 random bytes, base64; to rotate, move the old value to PASSWORD_PEPPER_PREVIOUS and set `2:<new>`",
    generate: 'echo "1:$(openssl rand -base64 32)"',
  },
  {
    name: "PASSWORD_PEPPER_PREVIOUS",
    required: false,
    purpose: "the pepper before a rotation: its hashes still verify, and are remade with the new one at sign-in",
    value: "the previous PASSWORD_PEPPER value, while members still sign in with hashes of it",
  },
  {
    name: "AWS_ACCESS_KEY_ID",
    required: false,
    purpose: "with AWS_SECRET_ACCESS_KEY: the AWS identity that assumes customers' roles (S3 report destinations)",
    value: "the access key id of an IAM user allowed to call sts:AssumeRole",
  },
  {
    name: "AWS_SECRET_ACCESS_KEY",
    required: false,
    purpose: "the secret of AWS_ACCESS_KEY_ID (S3 report destinations)",
    value: "that IAM user's secret access key",
  },
  {
    name: "GCP_SERVICE_ACCOUNT_KEY",
    required: false,
    purpose: "the Google service account that impersonates customers' (GCS report destinations)",
    value: "the service account's JSON key, whole",
  },
];

/**
 * Vars of wrangler.toml that name the team's own hosts and senders. Left at the example values (or a local
 * address) the deploy still works, with the feature named here off; `npm run deploy` warns about each.
 */
export const OWN_SETTINGS = [
  { name: "API_ORIGIN", effect: "links in report mails and webhooks point at a host that is not yours" },
  { name: "GATEWAY_HOST", effect: "POST /v1/tools/proxy-test reaches no gateway" },
  { name: "REPORTS_EMAIL_FROM", effect: "report mails cannot be sent" },
  { name: "NOTIFICATIONS_EMAIL_FROM", effect: '"webhook endpoint disabled" mails cannot be sent' },
];

/** An example or local value: the `example.com` family, loopback, or empty. */
export function isPlaceholder(value) {
  return /(^|[.@/])example\.(com|org|net)\b|localhost|127\.0\.0\.1|\[::1\]/.test(value ?? "") || !value;
}
