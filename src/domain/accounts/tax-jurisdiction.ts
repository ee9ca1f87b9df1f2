import type { BillingAddress } from "../../db/schema";

/** ISO 3166-1 alpha-2 country codes (officially assigned). */
const COUNTRIES = new Set(
  (
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
    "CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
    "GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO " +
    "JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR " +
    "MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO " +
    "RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV " +
    "TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"
  ).split(" "),
);

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

export function isCountryCode(value: string): boolean {
  return COUNTRIES.has(value);
}

/** Why an address fails tax-jurisdiction validation, or null when it passes. */
export function billingAddressProblem(address: BillingAddress): string | null {
  const country = address.country;
  if (!COUNTRIES.has(country)) return `billing_address.country: "${country}" is not an ISO 3166-1 alpha-2 code.`;
  if (country === "US") {
    if (!address.state || !US_STATES.has(address.state))
      return "billing_address.state: a valid US state code is required.";
    if (!address.postal_code || !/^\d{5}(-\d{4})?$/.test(address.postal_code)) {
      return "billing_address.postal_code: a US ZIP code (12345 or 12345-6789) is required.";
    }
  }
  if (country === "CA") {
    if (!address.state || !CA_PROVINCES.has(address.state))
      return "billing_address.state: a valid Canadian province code is required.";
    if (!address.postal_code || !/^[A-Z]\d[A-Z] ?\d[A-Z]\d$/.test(address.postal_code)) {
      return "billing_address.postal_code: a Canadian postal code (A1A 1A1) is required.";
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
