import type { OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { docsPage } from "./api-docs/docs-page";
import type { OpenApiDocument } from "./api-docs/document";
import { collectionPath, servePostmanCollection } from "./api-docs/postman-asset";
import type { AppEnv } from "./env";
import { now } from "./platform/clock";
import { ApiError } from "./platform/errors";
import { publicRouter } from "./routes";

/**
 * The public API's major versions (spec §9): each is a path segment with its own router and OpenAPI document,
 * served side by side. A breaking change ships as a new entry (`/v2`); the old one gets a `deprecation` and keeps
 * answering, with `Deprecation`, `Sunset` and `Link` headers on every response, until its sunset; from then on it
 * answers 410 `version_sunset` (its descriptions stay).
 */
export interface ApiVersion {
  /** The path segment: `v1` serves `/v1/…`. */
  name: string;
  /** The version's router and its OpenAPI document (whose server URL must end in `/<name>`). */
  build: () => { router: OpenAPIHono<AppEnv>; document: (origin: string) => OpenApiDocument };
  deprecation?: Deprecation;
}

export interface Deprecation {
  /** When the version was deprecated: `Deprecation: @<unix seconds>` (RFC 9745). */
  since: Date;
  /**
   * When it stops answering, at least 6 months after `since` (spec §9): `Sunset: <HTTP date>` (RFC 8594). From this
   * instant on, every call to it answers 410 `version_sunset`.
   */
  sunset: Date;
  /** The migration guide, `Link: <…>; rel="deprecation"`; a path is resolved against the request's origin. */
  guide: string;
  /** The sunset policy, `Link: <…>; rel="sunset"`; a path is resolved against the request's origin. */
  policy: string;
}

export const API_VERSIONS: readonly ApiVersion[] = [{ name: "v1", build: publicRouter }];

export type BuiltVersion = ApiVersion & ReturnType<ApiVersion["build"]>;

export function buildVersion(version: ApiVersion): BuiltVersion {
  const built = version.build();
  const { deprecation } = version;
  if (!deprecation) return { ...version, ...built };
  const marked = new WeakMap<OpenApiDocument, OpenApiDocument>();
  const document = (origin: string) => {
    const plain = built.document(origin);
    const deprecated = marked.get(plain) ?? markDeprecated(plain, deprecation);
    marked.set(plain, deprecated);
    return deprecated;
  };
  return { ...version, ...built, document };
}

/** The version new integrations should use (the MCP server's tools): the newest one not deprecated, else the newest. */
export function currentVersion(versions: readonly BuiltVersion[]): BuiltVersion {
  const current = versions.findLast((version) => !version.deprecation) ?? versions.at(-1);
  if (!current) throw new Error("no API version");
  return current;
}

/** An IMF-fixdate (RFC 9110), as `Date.toUTCString()` writes it. */
export const HTTP_DATE_PATTERN =
  "^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$";
/** One or more `<url>; rel="…"` links, comma-separated. */
export const LINK_HEADER_PATTERN =
  '^<[^>]+>; rel="(deprecation|sunset|next)"(, <[^>]+>; rel="(deprecation|sunset|next)")*$';

/** The headers every response of a deprecated version carries, as its document declares them. */
const DEPRECATION_HEADERS = {
  Deprecation: {
    description: "When this version was deprecated (RFC 9745): `@` and Unix seconds.",
    schema: { type: "string", pattern: "^@\\d+$", maxLength: 21 },
  },
  Sunset: {
    description: "When this version stops answering (RFC 8594), an HTTP date: from then on, 410 `version_sunset`.",
    schema: { type: "string", maxLength: 64, pattern: HTTP_DATE_PATTERN },
  },
  Link: {
    description:
      'The migration guide (`rel="deprecation"`) and the sunset policy (`rel="sunset"`); on a list with more, ' +
      'also its next page (`rel="next"`).',
    schema: { type: "string", maxLength: 4096, pattern: LINK_HEADER_PATTERN },
  },
} as const;

const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const;

const day = (date: Date) => date.toISOString().slice(0, 10);

/**
 * A deprecated version's document says so as its responses do: every operation `deprecated`, every response
 * declaring `Deprecation`, `Sunset` and `Link`, the 410 `version_sunset` it answers after the sunset date, and the
 * dates and the guide in its description.
 */
function markDeprecated(document: OpenApiDocument, deprecation: Deprecation): OpenApiDocument {
  const marked = structuredClone(document);
  marked.info.description =
    `${marked.info.description ?? ""}\n\n**Deprecated** since ${day(deprecation.since)}: this version stops ` +
    `answering on ${day(deprecation.sunset)}, after which every operation answers 410 \`version_sunset\` (this ` +
    `document stays). Migration guide: ${deprecation.guide}.`;
  marked.components = { ...marked.components, headers: { ...marked.components?.headers, ...DEPRECATION_HEADERS } };
  const refs = Object.fromEntries(Object.keys(DEPRECATION_HEADERS).map((name) => [name, ref("headers", name)]));
  // Declared as on every other error of the document (the rate-limit headers are optional there too).
  const errorHeaders = Object.fromEntries(
    ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]
      .filter((name) => marked.components?.headers?.[name])
      .map((name) => [name, ref("headers", name)]),
  );
  const sunset =
    `\`version_sunset\`: after the sunset date (${day(deprecation.sunset)}), every operation of this version ` +
    "answers 410 and does nothing; migrate with the guide in the `Link` header. Answered before any key is " +
    "checked, it carries no `X-RateLimit-*` headers.";
  for (const item of Object.values(marked.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item?.[method];
      // A signed link's operation keeps answering after the sunset, until the link expires.
      if (!operation || operation.security?.some((scheme) => "SignedLink" in scheme)) continue;
      operation.deprecated = true;
      const responses = operation.responses ?? {};
      const gone = responses["410"];
      // these documents define every response inline; a 410 the operation already has gains the sunset's case
      if (gone && !("$ref" in gone)) gone.description = `${gone.description}\n\n${sunset}`;
      else if (!gone) {
        responses["410"] = {
          description: sunset,
          headers: errorHeaders,
          content: { "application/json": { schema: ref("schemas", "Error") } },
        };
      }
      for (const response of Object.values(responses)) {
        if ("$ref" in response) continue;
        response.headers = { ...response.headers, ...refs };
      }
      operation.responses = responses;
    }
  }
  return marked;
}

function ref(kind: "headers" | "schemas", name: string) {
  return { $ref: `#/components/${kind}/${name}` };
}

/**
 * The version's descriptions, which need no token: its OpenAPI document, docs page and Postman collection (built with
 * the static assets). Register them before the version's router, whose API-key auth covers everything else under
 * `/<name>`.
 */
export function serveDescriptions(app: OpenAPIHono<AppEnv>, version: BuiltVersion): void {
  const base = `/${version.name}`;
  app.get(`${base}/openapi.json`, (c) => c.json(version.document(new URL(c.req.url).origin)));
  app.get(`${base}/docs`, (c) => c.html(docsPage(`${base}/openapi.json`)));
  app.get(collectionPath(version.name), (c) => servePostmanCollection(c, version.name));
}

/**
 * From its sunset on, a version answers every call 410 `version_sunset` (with its deprecation headers, as before)
 * ahead of its router: no authentication, no rate-limit charge, no handler. Its descriptions stay served as the
 * reference for migrating: mount this after `serveDescriptions`, whose handlers answer first, and before the routes.
 */
export function closeAtSunset(app: OpenAPIHono<AppEnv>, version: ApiVersion): void {
  const { deprecation } = version;
  if (!deprecation) return;
  app.use(`/${version.name}/*`, async (c, next) => {
    if (now() < deprecation.sunset.getTime()) return next();
    const guide = resolved(deprecation.guide, new URL(c.req.url).origin);
    throw new ApiError(
      "version_sunset",
      `API version ${version.name} reached its sunset on ${day(deprecation.sunset)} and no longer answers: ` +
        `migrate with the guide at ${guide}.`,
    );
  });
}

/** The headers that mark every response of a deprecated version, errors and descriptions included. */
export function deprecationNotices(versions: readonly ApiVersion[]) {
  const deprecated = versions.filter((version) => version.deprecation !== undefined);
  return createMiddleware<AppEnv>(async (c, next) => {
    await next();
    const version = deprecated.find((candidate) => isUnder(c.req.path, candidate.name));
    if (!version?.deprecation) return;
    for (const [name, value] of deprecationHeaders(version.deprecation, new URL(c.req.url).origin)) {
      c.res.headers.append(name, value);
    }
  });
}

/** `Deprecation`, `Sunset` and the two `Link`s, in that order (a response's own `Link`, e.g. `rel="next"`, stays). */
export function deprecationHeaders(deprecation: Deprecation, origin: string): Array<[string, string]> {
  const link = (target: string, rel: string) => `<${resolved(target, origin)}>; rel="${rel}"`;
  return [
    ["Deprecation", `@${Math.floor(deprecation.since.getTime() / 1000)}`],
    ["Sunset", deprecation.sunset.toUTCString()],
    ["Link", link(deprecation.guide, "deprecation")],
    ["Link", link(deprecation.policy, "sunset")],
  ];
}

/** A guide or policy given as a path, resolved against the request's origin (a full URL stays as it is). */
function resolved(target: string, origin: string): string {
  return new URL(target, origin).href;
}

function isUnder(path: string, versionName: string): boolean {
  return path === `/${versionName}` || path.startsWith(`/${versionName}/`);
}
