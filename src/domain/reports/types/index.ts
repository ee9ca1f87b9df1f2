import type { ReportFilters, ReportType } from "../../../db/schema";
import { invoicesReport } from "./invoices";
import { ispBatchesReport } from "./isp-batches";
import { requestsReport } from "./requests";
import type { ReportKind } from "./scope";
import { subusersReport } from "./subusers";
import { trafficByDomainReport, trafficReport } from "./traffic";

export type { ReportKind } from "./scope";

/** The five report types (spec §2.11), each a row generator. */
export const reportKinds: Record<ReportType, ReportKind> = {
  traffic: trafficReport,
  requests: requestsReport,
  invoices: invoicesReport,
  subusers: subusersReport,
  isp_batches: ispBatchesReport,
};

/** The report type's rows, as the definition's filters group them (`traffic` per sub-user or per domain). */
export function reportKindOf(type: ReportType, filters: ReportFilters): ReportKind {
  return type === "traffic" && filters.groupBy === "domain" ? trafficByDomainReport : reportKinds[type];
}
