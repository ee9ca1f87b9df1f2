CREATE TABLE `session_terminations` (
	`session_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`gate_name` text NOT NULL,
	`requested_at` integer NOT NULL,
	`done_at` integer
);
--> statement-breakpoint
CREATE INDEX `session_terminations_pending` ON `session_terminations` (`done_at`,`requested_at`);