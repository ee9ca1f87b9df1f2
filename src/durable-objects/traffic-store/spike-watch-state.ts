import { BLOB_VERSION_COLUMN, BlobShapes } from "../shared/blob-shapes";
import type { Lesson, SpikeAlert, SpikeSensitivity, SpikeSetting } from "./contract";
import type { SpikeTrack } from "./spike-detector";

/**
 * The spike watch's storage: its one row (storage steps of the traffic layout) and the shapes of the state that
 * row holds, versioned on their own (`BlobShapes`): the state is rewritten whole, so a field added to it needs a
 * shape step, not a table step.
 */
export const SPIKE_TABLES =
  "CREATE TABLE IF NOT EXISTS spike_watch (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL);";
/** The state's shape version beside it (rows from before: 1). */
export const SPIKE_STATE_VERSION = `ALTER TABLE spike_watch ADD COLUMN ${BLOB_VERSION_COLUMN};`;

/** A sub-user's detector state with what the store adds to an open episode: its id and sampled domains. */
export interface WatchedTrack extends SpikeTrack {
  spikeId: string | null;
  sensitivity: SpikeSensitivity;
  /** The episode's sampled bytes per target host (the heaviest kept), and in all. */
  hosts: Record<string, number>;
  sampledBytes: number;
}

/** The state, shape 3 (the latest). */
export interface WatchState {
  /** Every 5-minute bucket before this was judged. */
  judgedTo: number | null;
  /** Sub-users not at the default sensitivity. */
  settings: Record<string, SpikeSetting>;
  tracks: Record<string, WatchedTrack>;
  outbox: SpikeAlert[];
  /** Per sub-user, what an episode acknowledged as normal taught its baseline (one at a time, the latest). */
  lessons: Record<string, Lesson>;
}

/**
 * The state's shapes (append, never edit). A state saved before versions is shape 1.
 * 2: a baseline (an episode's, an alert's) says how many past days it read (`days`).
 * 3: lessons (episodes acknowledged as normal), and each track's rate before its latest rise (`prior`).
 */
export const SPIKE_WATCH_STATE = BlobShapes.first<WatchStateV1>("spike_watch")
  .step(baselineDays)
  .step(lessonsAndPriors);

/**
 * 1 → 2: `days` where a baseline lacks it. A state saved before baselines read past days has none: 0, which is what
 * they read (weeks alone). One saved unversioned by the code after (shape 2, stored as 1) keeps its own.
 */
function baselineDays(state: WatchStateV1): WatchStateV2 {
  const tracks: WatchStateV2["tracks"] = {};
  for (const [subuserId, track] of Object.entries(state.tracks)) {
    const episode = track.episode && {
      ...track.episode,
      baseline: { ...track.episode.baseline, days: track.episode.baseline.days ?? 0 },
    };
    tracks[subuserId] = { ...track, episode };
  }
  const outbox = state.outbox.map((alert) => ({
    ...alert,
    baseline: { ...alert.baseline, days: alert.baseline.days ?? 0 },
  }));
  return { ...state, tracks, outbox };
}

/**
 * 2 → 3: no lessons yet; a track's `prior` unknown (null: its next step that leaves the trailing window sets it, so
 * until then a rise is judged against the baseline alone, as before).
 */
function lessonsAndPriors(state: WatchStateV2): WatchState {
  const tracks: Record<string, WatchedTrack> = {};
  for (const [subuserId, track] of Object.entries(state.tracks)) tracks[subuserId] = { ...track, prior: null };
  return { ...state, tracks, lessons: {} };
}

/* Shape 2, frozen: shape 1 with `days` on every baseline. */

interface WatchStateV2 {
  judgedTo: number | null;
  settings: Record<string, "off" | "low" | "medium" | "high">;
  tracks: Record<string, Omit<WatchedTrack, "prior">>;
  outbox: SpikeAlert[];
}

/* Shape 1, frozen: the state as the code before versions saved it (`days` only from the code that had it). */

type UsageV1 = [bytes: number, requests: number];

interface RateV1 {
  bytesPerHour: number;
  requestsPerHour: number;
}

interface BaselineV1 {
  rate: UsageV1;
  spread: UsageV1;
  weeks: number;
  days?: number;
}

interface TrackV1 {
  recent: UsageV1[];
  above: number;
  aboveSince: number | null;
  below: number;
  episode: { startedAt: number; observed: UsageV1; baseline: BaselineV1; peak: UsageV1; total: UsageV1 } | null;
  spikeId: string | null;
  sensitivity: "low" | "medium" | "high";
  hosts: Record<string, number>;
  sampledBytes: number;
}

interface AlertV1 {
  kind: "started" | "ended";
  spikeId: string;
  subuserId: string;
  sensitivity: "low" | "medium" | "high";
  startedAt: number;
  at: number;
  observed: RateV1;
  baseline: RateV1 & { weeks: number; days?: number };
  floor: RateV1;
  peak: RateV1;
  bytes: number;
  requests: number;
  sampledHosts: Array<{ host: string; bytes: number }>;
  sampledBytes: number;
  topSources: Array<{ block: string; firstSeen: number; lastSeen: number; requests: number; bytes: number }>;
}

interface WatchStateV1 {
  judgedTo: number | null;
  settings: Record<string, "off" | "low" | "medium" | "high">;
  tracks: Record<string, TrackV1>;
  outbox: AlertV1[];
}
