-- The reference price catalogue (USD cents) and a synthetic static-IP inventory (100.64.0.0/10, shared address space).
INSERT INTO bandwidth_prices (product, price_per_gb_minor) VALUES ('residential', 450), ('mobile', 800);
--> statement-breakpoint
INSERT INTO subscription_tiers (product, plan, gb_included, monthly_price_minor) VALUES
  ('residential', 'starter', 50, 20000),
  ('residential', 'pro', 500, 150000),
  ('residential', 'business', 2000, 500000),
  ('mobile', 'starter', 25, 20000),
  ('mobile', 'pro', 250, 150000),
  ('mobile', 'business', 1000, 500000);
--> statement-breakpoint
INSERT INTO isp_asns (country, asn, carrier, premium, price_per_ip_month_minor) VALUES
  ('US', 7922, 'Comcast', 0, 600),
  ('US', 701, 'Verizon', 0, 600),
  ('US', 7018, 'AT&T', 1, 720),
  ('GB', 5089, 'Virgin Media', 0, 600),
  ('GB', 2856, 'BT', 1, 720),
  ('DE', 3320, 'Deutsche Telekom', 1, 720),
  ('DE', 3209, 'Vodafone', 0, 600),
  ('FR', 3215, 'Orange', 0, 600),
  ('JP', 2516, 'KDDI', 0, 600),
  ('BR', 28573, 'Claro', 0, 600),
  ('NL', 1136, 'KPN', 0, 600),
  ('SG', 9506, 'Singtel', 0, 600),
  ('PL', 5617, 'Orange Polska', 0, 600),
  ('ZA', 37457, 'Telkom', 0, 600),
  ('AR', 7303, 'Telecom Argentina', 0, 600);
--> statement-breakpoint
WITH RECURSIVE
  seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 6000),
  pools(k, country, city, asn, carrier, size) AS (VALUES
    (0, 'US', 'newyork', 7922, 'Comcast', 6000),
    (1, 'US', 'la', 7922, 'Comcast', 400),
    (2, 'US', 'chicago', 701, 'Verizon', 400),
    (3, 'US', 'dallas', 7018, 'AT&T', 300),
    (4, 'GB', 'london', 5089, 'Virgin Media', 400),
    (5, 'GB', 'manchester', 2856, 'BT', 200),
    (6, 'DE', 'frankfurt', 3320, 'Deutsche Telekom', 300),
    (7, 'DE', 'berlin', 3209, 'Vodafone', 300),
    (8, 'FR', 'paris', 3215, 'Orange', 300),
    (9, 'JP', 'tokyo', 2516, 'KDDI', 300),
    (10, 'BR', 'saopaulo', 28573, 'Claro', 200),
    (11, 'NL', 'amsterdam', 1136, 'KPN', 200),
    (12, 'SG', 'singapore', 9506, 'Singtel', 200),
    (13, 'PL', NULL, 5617, 'Orange Polska', 200),
    (14, 'ZA', NULL, 37457, 'Telkom', 100),
    (15, 'AR', NULL, 7303, 'Telecom Argentina', 100))
INSERT INTO isp_ips (id, ip, port, country, city, asn, carrier, status)
SELECT printf('ip_%02d%05d', k, n), printf('100.%d.%d.%d', 64 + k, n / 256, n % 256), 8000, country, city, asn, carrier, 'available'
FROM pools JOIN seq ON seq.n <= pools.size;
