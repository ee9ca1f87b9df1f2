import type { BillingAddress } from "../../db/schema";
import { isCountryCode } from "../../platform/countries";

/** US states, DC, territories and military "states" (USPS codes). */
const US_STATES = new Set(
  (
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR " +
    "PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI UM AA AE AP"
  ).split(" "),
);

const CA_PROVINCES = new Set("AB BC MB NB NL NS NT NU ON PE QC SK YT".split(" "));

/** EU member states and the prefix of their VAT ids (Greece uses EL). */
const EU_VAT_PREFIX: Record<string, string> = {
  AT: "AT",
  BE: "BE",
  BG: "BG",
  CY: "CY",
  CZ: "CZ",
  DE: "DE",
  DK: "DK",
  EE: "EE",
  ES: "ES",
  FI: "FI",
  FR: "FR",
  GR: "EL",
  HR: "HR",
  HU: "HU",
  IE: "IE",
  IT: "IT",
  LT: "LT",
  LU: "LU",
  LV: "LV",
  MT: "MT",
  NL: "NL",
  PL: "PL",
  PT: "PT",
  RO: "RO",
  SE: "SE",
  SI: "SI",
  SK: "SK",
};

/** Tax id formats of countries with a well-known scheme; others get a generic shape check. */
const TAX_ID_FORMATS: Record<string, RegExp> = {
  US: /^\d{2}-?\d{7}$/, // EIN
  GB: /^GB(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/, // VAT
  CA: /^\d{9}(RT\d{4})?$/, // Business Number
  AU: /^\d{11}$/, // ABN
  CH: /^CHE\d{9}(MWST|TVA|IVA)?$/, // UID
  NO: /^(NO)?\d{9}(MVA)?$/,
};
const GENERIC_TAX_ID = /^[A-Z0-9]{4,30}$/;

/** Why an address fails tax-jurisdiction validation, or null when it passes. */
export function billingAddressProblem(address: BillingAddress): string | null {
  const country = address.country;
  if (!isCountryCode(country)) return `billing_address.country: "${country}" is not an ISO 3166-1 alpha-2 code.`;
  if (country === "US") {
    if (!address.state || !US_STATES.has(address.state))
      return "billing_address.state: a valid US state code is required.";
    if (!address.postalCode || !/^\d{5}(-\d{4})?$/.test(address.postalCode)) {
      return "billing_address.postalCode: a US ZIP code (12345 or 12345-6789) is required.";
    }
  }
  if (country === "CA") {
    if (!address.state || !CA_PROVINCES.has(address.state))
      return "billing_address.state: a valid Canadian province code is required.";
    if (!address.postalCode || !/^[A-Z]\d[A-Z] ?\d[A-Z]\d$/.test(address.postalCode)) {
      return "billing_address.postalCode: a Canadian postal code (A1A 1A1) is required.";
    }
  }
  return null;
}

/** Why a tax id does not fit the country it is filed in, or null when it does. */
export function taxIdProblem(taxId: string, country: string | null): string | null {
  const normalized = normalizeTaxId(taxId);
  if (country && EU_VAT_PREFIX[country]) {
    const prefix = EU_VAT_PREFIX[country];
    return new RegExp(`^${prefix}[0-9A-Z]{2,12}$`).test(normalized)
      ? null
      : `tax_id: an EU VAT id for ${country} must start with "${prefix}" followed by 2-12 letters or digits.`;
  }
  const format = (country && TAX_ID_FORMATS[country]) || GENERIC_TAX_ID;
  return format.test(normalized) ? null : `tax_id: not a valid tax id${country ? ` for ${country}` : ""}.`;
}

/** Tax ids are stored without separators, upper-case. */
export function normalizeTaxId(taxId: string): string {
  return taxId.toUpperCase().replace(/[\s.\-/]/g, "");
}
