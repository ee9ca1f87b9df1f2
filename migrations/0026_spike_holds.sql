ALTER TABLE `subusers` ADD `spike_disabled_by` text;--> statement-breakpoint
ALTER TABLE `subusers` ADD `spike_capped_by` text;--> statement-breakpoint
-- Episodes recorded before holds were remembered: an open action stays liftable by its episode's acknowledgement.
UPDATE `subusers` SET `spike_disabled_by` = (
  SELECT `id` FROM `subuser_traffic_spikes` s
  WHERE s.`subuser_id` = `subusers`.`id` AND s.`action` = 'disable' AND s.`acknowledged_at` IS NULL
  ORDER BY s.`id` DESC LIMIT 1
) WHERE `status` = 'disabled';--> statement-breakpoint
UPDATE `subusers` SET `spike_capped_by` = (
  SELECT `id` FROM `subuser_traffic_spikes` s
  WHERE s.`subuser_id` = `subusers`.`id` AND s.`action` = 'cap' AND s.`acknowledged_at` IS NULL
  ORDER BY s.`id` DESC LIMIT 1
) WHERE `spike_cap_rps` IS NOT NULL;
