CREATE TABLE `subuser_traffic_spikes` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`subuser_id` text NOT NULL,
	`sensitivity` text NOT NULL,
	`started_at` integer NOT NULL,
	`detected_at` integer NOT NULL,
	`ended_at` integer,
	`figures` text NOT NULL,
	`outcome` text,
	`action` text NOT NULL,
	`acknowledged_at` integer
);
--> statement-breakpoint
CREATE INDEX `subuser_traffic_spikes_account` ON `subuser_traffic_spikes` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `subuser_traffic_spikes_subuser` ON `subuser_traffic_spikes` (`subuser_id`,`id`);--> statement-breakpoint
ALTER TABLE `subusers` ADD `spike_sensitivity` text DEFAULT 'medium' NOT NULL;--> statement-breakpoint
ALTER TABLE `subusers` ADD `spike_action` text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE `subusers` ADD `spike_cap_rps` integer;