import { beforeAll, describe, expect, it } from "vitest";
import { type KeyAccess, type KeyArea, type MemberRole, roleScopes, scopeAllows } from "../../src/vocabulary";
import { createAccount } from "../helpers/accounts";
import { json } from "../helpers/http";
import { invited, memberCall, ownerOf, type TestMember } from "../helpers/members";
import { type Operation, publicOperations } from "../helpers/operations";

/**
 * The role walk: every operation of the public OpenAPI document, read at run time (a route added later is walked
 * too), called by signed-in members of each role below owner. One authorization model serves keys and members, so
 * an operation outside the role's scopes must answer 403 (`insufficient_scope`; a test helper, `sandbox_key_required`:
 * members act on the live account), never 2xx, whatever ids and body it is given, before any input is read.
 */

const ROLES: MemberRole[] = ["viewer", "billing", "developer", "admin"];
let members: Record<string, TestMember>;
let operations: Operation[];

beforeAll(async () => {
  const owner = await ownerOf(await createAccount({ plan: "pro" }));
  members = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, await invited(owner, role)])));
  operations = await publicOperations();
});

function concretePath(operation: Operation): string {
  return operation.path.replace(/\{product\}/g, "residential").replace(/\{[^}]+\}/g, "xyz_01JD2W6Q6J5E4V3N0Z9Y8X7W6V");
}

describe("role walk", () => {
  it("walks every scoped operation of the document", () => {
    const scoped = operations.filter((operation) => operation.scope && operation.scope !== "any");
    expect(scoped.length).toBeGreaterThan(80);
  });

  for (const role of ROLES) {
    it(`a ${role} gets 403 on every operation outside its role, never 2xx`, async () => {
      const member = members[role] as TestMember;
      const refused: string[] = [];
      for (const operation of operations) {
        if (!operation.scope || operation.scope === "any") continue;
        const [area, access] = operation.scope.split(":") as [KeyArea, KeyAccess];
        const allowed = scopeAllows(roleScopes[role], area, access) && !operation.sandboxOnly;
        if (allowed) continue;
        const response = await memberCall(member, operation.method.toUpperCase(), concretePath(operation), {
          body: operation.hasBody ? (operation.example ?? {}) : undefined,
        });
        const body = await json(response);
        const what = `${role} ${operation.id} (${operation.scope}) → ${response.status} ${body.code}`;
        expect(response.status, what).toBe(403);
        expect(body.code, what).toBe(operation.sandboxOnly ? "sandbox_key_required" : "insufficient_scope");
        refused.push(operation.id);
      }
      // Every role is refused something, and a viewer every change.
      expect(refused.length).toBeGreaterThan(0);
      if (role === "viewer") {
        const writes = operations.filter((operation) => operation.scope?.endsWith(":write"));
        expect(writes.every((operation) => refused.includes(operation.id))).toBe(true);
      }
    }, 60_000);
  }

  it("the roles' scopes are the issue's: owner everything; admin all but money and people; billing money; developer sub-users, traffic, keys; viewer read", () => {
    expect(roleScopes.owner).toBeNull();
    expect(roleScopes.admin).toMatchObject({ billing: "read", subusers: "write", api_keys: "write", reports: "write" });
    expect(roleScopes.billing).toEqual({ billing: "write", account: "read" });
    expect(roleScopes.developer).toEqual({ subusers: "write", traffic: "write", api_keys: "write" });
    expect(Object.values(roleScopes.viewer ?? {}).every((access) => access === "read")).toBe(true);
  });
});
