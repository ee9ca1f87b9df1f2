CREATE TABLE `usage_minute_requests` (
	`account_id` text NOT NULL,
	`minute` integer NOT NULL,
	`requests` integer NOT NULL,
	PRIMARY KEY(`account_id`, `minute`)
);
