import { type RouteHandler, z } from "@hono/zod-openapi";
import { addMember } from "../../domain/members/members";
import { findLiveAccount } from "../../domain/sandbox/twins";
import type { AppEnv } from "../../env";
import { randomString } from "../../platform/crypto";
import { email, text, token } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { memberRoleSchema, memberSchema, passwordSchema, presentMember } from "../../resources/member";
import { accountParams, tags } from "./shared";

const body = z
  .strictObject({
    email: email(),
    name: text(100, 1),
    role: memberRoleSchema.default("owner"),
    password: passwordSchema
      .optional()
      .openapi({ description: "Omit to have one generated (24 characters), returned once." }),
  })
  .openapi("AdminMemberCreate", { example: { email: "owner@acme.example", name: "Ada Owner" } });

export const route = internalRoute(
  {
    operationId: "adminAddMember",
    method: "post",
    path: "/accounts/{id}/members",
    tags,
    summary: "Add a member",
    description:
      "How an account gets its first owner (the others are invited from the API): a member with this email, name " +
      "and role (default `owner`) who signs in with `POST /v1/auth/sign-in`. A generated password is returned " +
      "once; a given one never. 409 `member_exists` when a present member has the email.",
    request: { params: accountParams, body: jsonBody(body) },
    secret: true,
    errors: ["not_found", "member_exists"],
    responses: {
      201: jsonContent(
        memberSchema
          .extend({
            password: token(/^[0-9A-Za-z]{24}$/, 24)
              .nullable()
              .openapi({ description: "The generated password, shown once; null when one was given." }),
          })
          .openapi("AdminMember"),
        "The member.",
      ),
    },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const ctx = c.get("ctx");
  const account = await findLiveAccount(ctx, c.req.valid("param").id);
  const generated = input.password === undefined ? randomString(24) : null;
  const member = await addMember(ctx, account.id, { ...input, password: input.password ?? (generated as string) });
  return c.json({ ...presentMember(member), password: generated }, 201);
};
