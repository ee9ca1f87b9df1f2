import { toIso } from "../../../platform/clock";
import type { DomainContext } from "../../context";
import { type Delivery, DestinationError } from "./types";

/** The `email` destination: a mail through the `send_email` binding with the download link, not the file. */
export async function deliverByEmail(ctx: DomainContext, delivery: Delivery): Promise<void> {
  const { report, run } = delivery;
  const destination = report.destination;
  if (destination.type !== "email") throw new DestinationError("not an email destination");
  const text = [
    `Your report "${report.name}" (${report.type}, ${run.format}) is ready.`,
    "",
    `Period: ${toIso(run.periodFrom)} to ${toIso(run.periodTo)}`,
    `Rows: ${run.rows}; size: ${run.bytes} bytes.`,
    "",
    `Download (valid until ${toIso(delivery.expiresAt)}):`,
    delivery.downloadUrl,
    "",
    `Later, GET /v1/reports/runs/${run.id} gives a fresh link; the file is kept for 90 days.`,
  ].join("\n");
  try {
    await ctx.env.EMAIL.send({
      from: ctx.env.REPORTS_EMAIL_FROM,
      to: destination.email,
      subject: `Report ready: ${report.name}`,
      text,
    });
  } catch (error) {
    throw new DestinationError(`email: ${(error as Error).message}`);
  }
}
