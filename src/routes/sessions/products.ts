import type { SessionProduct } from "../../domain/traffic/sessions";

/** Sticky sessions exist for the gateway products only: each session operation is declared once per product. */
export const SESSION_PRODUCTS = [
  { product: "residential", name: "Residential" },
  { product: "mobile", name: "Mobile" },
] as const satisfies ReadonlyArray<{ product: SessionProduct; name: string }>;
