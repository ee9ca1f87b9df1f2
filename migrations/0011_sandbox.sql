CREATE TABLE `sandbox_accounts` (
	`live_account_id` text PRIMARY KEY NOT NULL,
	`sandbox_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`live_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`sandbox_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sandbox_accounts_sandbox_account_id_unique` ON `sandbox_accounts` (`sandbox_account_id`);--> statement-breakpoint
DROP INDEX `isp_ips_stock`;--> statement-breakpoint
ALTER TABLE `isp_ips` ADD `sandbox` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `isp_ips_stock` ON `isp_ips` (`sandbox`,`status`,`country`,`asn`,`city`);--> statement-breakpoint
-- The sandbox's own simulated ISP inventory: the live catalogue's pools again, on 198.18.0.0/15 (RFC 2544,
-- never routed), ids ip_50… to ip_65…, so sandbox orders never take live IPs.
WITH RECURSIVE
  seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 6000),
  shapes(k, country, city, asn, carrier, size) AS (
    SELECT CAST(substr(id, 4, 2) AS INTEGER), country, city, asn, carrier, COUNT(*)
    FROM isp_ips WHERE sandbox = 0 GROUP BY 1, 2, 3, 4, 5)
INSERT INTO isp_ips (id, ip, port, country, city, asn, carrier, status, sandbox)
SELECT printf('ip_%02d%05d', 50 + k, n), printf('198.%d.%d.%d', 18 + k / 8, (k % 8) * 32 + n / 256, n % 256), 8000,
  country, city, asn, carrier, 'available', 1
FROM shapes JOIN seq ON seq.n <= shapes.size;
