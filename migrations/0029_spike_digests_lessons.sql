CREATE TABLE `traffic_spike_digests` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`due_at` integer NOT NULL,
	`notified_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `traffic_spike_digests_waiting` ON `traffic_spike_digests` (`account_id`) WHERE notified_at IS NULL;--> statement-breakpoint
CREATE INDEX `traffic_spike_digests_account` ON `traffic_spike_digests` (`account_id`,`notified_at`);--> statement-breakpoint
CREATE INDEX `traffic_spike_digests_due` ON `traffic_spike_digests` (`due_at`) WHERE notified_at IS NULL;--> statement-breakpoint
ALTER TABLE `subuser_traffic_spikes` ADD `digest_id` text;--> statement-breakpoint
ALTER TABLE `subuser_traffic_spikes` ADD `taught` text;--> statement-breakpoint
CREATE INDEX `subuser_traffic_spikes_digest` ON `subuser_traffic_spikes` (`digest_id`);