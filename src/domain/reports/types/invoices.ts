import { sql } from "drizzle-orm";
import { keysetPages, PAGE_SIZE, type ReportKind } from "./scope";

interface LedgerLine {
  id: string;
  created_at: number;
  reason: string;
  amount_minor: number;
  currency: string;
  reference: string | null;
  reference_type: string | null;
  product: string | null;
}

/**
 * `invoices`: the account's ledger lines of the period (charges negative, credits positive), each with the order,
 * subscription, batch or IP it refers to and that reference's product. `filters.products` keeps the lines of those
 * products; `filters.subusers` does not apply (money belongs to the account).
 */
export const invoicesReport: ReportKind = {
  columns: [
    { name: "id", type: "string" },
    { name: "created_at", type: "timestamp" },
    { name: "reason", type: "string" },
    { name: "amount", type: "number" },
    { name: "currency", type: "string" },
    { name: "reference", type: "string", nullable: true },
    { name: "reference_type", type: "string", nullable: true },
    { name: "product", type: "string", nullable: true },
  ],
  pages(ctx, scope) {
    const productFilter = scope.products
      ? sql`AND product IN (SELECT value FROM json_each(${JSON.stringify(scope.products)}))`
      : sql``;
    return keysetPages<LedgerLine>(
      (last) =>
        ctx.db.all<LedgerLine>(sql`
          SELECT * FROM (
            SELECT l.id, l.created_at, l.reason, l.amount_minor, a.currency, l.reference,
              CASE substr(l.reference, 1, instr(l.reference, '_') - 1)
                WHEN 'ord' THEN 'order' WHEN 'sbn' THEN 'subscription' WHEN 'bat' THEN 'batch' WHEN 'ip' THEN 'ip'
              END AS reference_type,
              coalesce(o.product, s.product, CASE WHEN b.id IS NOT NULL OR i.id IS NOT NULL THEN 'isp' END) AS product
            FROM ledger_entries l
            JOIN accounts a ON a.id = l.account_id
            LEFT JOIN orders o ON o.id = l.reference
            LEFT JOIN subscriptions s ON s.id = l.reference
            LEFT JOIN isp_batches b ON b.id = l.reference
            LEFT JOIN isp_ips i ON i.id = l.reference
            WHERE l.account_id = ${scope.accountId} AND l.created_at >= ${scope.from} AND l.created_at < ${scope.to}
              AND l.id > ${last?.id ?? ""}
          ) WHERE true ${productFilter}
          ORDER BY id LIMIT ${PAGE_SIZE}`),
      (line) => ({
        id: line.id,
        created_at: line.created_at,
        reason: line.reason,
        amount: line.amount_minor / 100,
        currency: line.currency,
        reference: line.reference,
        reference_type: line.reference_type,
        product: line.product,
      }),
    );
  },
};
