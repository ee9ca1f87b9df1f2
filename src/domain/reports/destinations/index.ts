import type { DestinationType } from "../../../db/schema";
import type { DomainContext } from "../../context";
import { deliverByEmail } from "./email";
import { uploadToGcs } from "./gcs";
import { uploadToS3 } from "./s3";
import type { Delivery } from "./types";
import { deliverToWebhook } from "./webhook";

export { type Delivery, DestinationError } from "./types";

const deliverers: Record<DestinationType, (ctx: DomainContext, delivery: Delivery) => Promise<void>> = {
  email: deliverByEmail,
  webhook: deliverToWebhook,
  s3: uploadToS3,
  gcs: uploadToGcs,
};

/** Sends a finished file to the report's destination; throws `DestinationError` with the reason on failure. */
export function deliver(ctx: DomainContext, delivery: Delivery): Promise<void> {
  return deliverers[delivery.report.destination.type](ctx, delivery);
}
