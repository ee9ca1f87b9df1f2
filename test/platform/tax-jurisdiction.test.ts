import { describe, expect, it } from "vitest";
import { billingAddressProblem, taxIdProblem } from "../../src/domain/accounts/tax-jurisdiction";

const address = (over: Record<string, string | null>) => ({ line1: "1 Main St", city: "Town", country: "US", ...over });

describe("tax jurisdiction rules", () => {
  it.each([
    [{ country: "US", state: "CA", postalCode: "94105" }, true],
    [{ country: "US", state: "CA", postalCode: "94105-1234" }, true],
    [{ country: "US", state: "XX", postalCode: "94105" }, false],
    [{ country: "US", state: "CA", postalCode: "9410" }, false],
    [{ country: "US", state: null, postalCode: "94105" }, false],
    [{ country: "CA", state: "ON", postalCode: "K1A 0B1" }, true],
    [{ country: "CA", state: "ZZ", postalCode: "K1A 0B1" }, false],
    [{ country: "DE", postalCode: "10115" }, true],
    [{ country: "XK" }, false],
    [{ country: "ZZ" }, false],
  ])("address %j valid = %s", (over, valid) => {
    expect(billingAddressProblem(address(over)) === null).toBe(valid);
  });

  it.each([
    ["DE123456789", "DE", true],
    ["de 123 456 789", "DE", true],
    ["FR123456789", "DE", false],
    ["EL123456789", "GR", true],
    ["GR123456789", "GR", false],
    ["GB123456789", "GB", true],
    ["GB12345", "GB", false],
    ["12-3456789", "US", true],
    ["123", "US", false],
    ["ABC12345", "JP", true],
    ["ABC12345", null, true],
    ["!", null, false],
  ])("tax id %s in %s valid = %s", (taxId, country, valid) => {
    expect(taxIdProblem(taxId, country) === null).toBe(valid);
  });
});
