-- JSON documents stored in rows speak the domain's language (camelCase), like every column does.
UPDATE `accounts` SET `billing_address` = json_remove(json_set(`billing_address`, '$.postalCode', json_extract(`billing_address`, '$.postal_code')), '$.postal_code')
WHERE `billing_address` IS NOT NULL AND json_type(`billing_address`, '$.postal_code') IS NOT NULL;
--> statement-breakpoint
UPDATE `accounts` SET `limits` = json_remove(
  json_set(`limits`, '$.apiBurstPerMin', json_extract(`limits`, '$.api_burst_per_min'), '$.apiDaily', json_extract(`limits`, '$.api_daily')),
  '$.api_burst_per_min', '$.api_daily')
WHERE `limits` IS NOT NULL AND json_type(`limits`, '$.api_burst_per_min') IS NOT NULL;
--> statement-breakpoint
UPDATE `orders` SET `details` = json_object('gb', json_extract(`details`, '$.gb'), 'pricePerGbMinor', CAST(ROUND(json_extract(`details`, '$.price_per_gb') * 100) AS INTEGER))
WHERE json_type(`details`, '$.price_per_gb') IS NOT NULL;
--> statement-breakpoint
UPDATE `orders` SET `details` = json_object(
  'batchId', json_extract(`details`, '$.batch_id'), 'quantity', json_extract(`details`, '$.quantity'),
  'country', json_extract(`details`, '$.country'), 'city', json_extract(`details`, '$.city'),
  'asn', json_extract(`details`, '$.asn'), 'months', json_extract(`details`, '$.months'),
  'pricePerIpMonthMinor', CAST(ROUND(json_extract(`details`, '$.price_per_ip_month') * 100) AS INTEGER),
  'expiresAt', CAST(strftime('%s', `created_at` / 1000, 'unixepoch', '+' || json_extract(`details`, '$.months') || ' months') AS INTEGER) * 1000 + `created_at` % 1000)
WHERE json_type(`details`, '$.batch_id') IS NOT NULL;
