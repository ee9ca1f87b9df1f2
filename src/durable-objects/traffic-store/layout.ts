import type { StorageStep } from "../shared/storage-versions";
import { ARRIVAL_PAGES_TABLE, ARRIVALS_TABLE } from "./arrival-rows";
import { SOURCE_TABLES } from "./client-sources";
import { BUCKET_TABLES } from "./folded-tiers";
import { convertLegacyLayout } from "./legacy-layout";
import { SESSION_TABLES } from "./session-index";
import { SPIKE_STATE_VERSION, SPIKE_TABLES } from "./spike-watch-state";

/**
 * The storage steps of a traffic store's usage layout (`migrate`): append, never edit. The meter keeps its own
 * area (`usage_meter`).
 */
export const TRAFFIC_LAYOUT: StorageStep[] = [
  // 1: rows per account-minute: the arrival rows, the folded tiers with their cumulative series, sources' snapshots
  // and alert state, and session records. A store of the earlier layout (a row per cell and tier, per request-log
  // entry, per part key, per source and per session) is converted into it and its tables dropped.
  (sql) => {
    sql.exec(`${ARRIVALS_TABLE}; ${BUCKET_TABLES} ${SOURCE_TABLES} ${SESSION_TABLES}
      CREATE TABLE IF NOT EXISTS asn_carriers (asn INTEGER PRIMARY KEY, carrier TEXT NOT NULL);`);
    convertLegacyLayout(sql);
  },
  // 2: the blob columns of an arrival row past their room in a row (2 MB in all), in pages.
  (sql) => sql.exec(ARRIVAL_PAGES_TABLE),
  // 3: the spike watch's state (settings, detector tracks, the alerts' outbox): one row.
  (sql) => sql.exec(SPIKE_TABLES),
  // 4: the spike watch state's shape version (its JSON's own steps: `SPIKE_WATCH_STATE`); rows from before are 1.
  (sql) => sql.exec(SPIKE_STATE_VERSION),
];
