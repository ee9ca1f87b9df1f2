import { DAY, HOUR } from "../../platform/clock";
import { newIdAt } from "../../platform/ids";
import { LOGGED_SAMPLE } from "./arrival-rows";
import type { ClientSources } from "./client-sources";
import {
  CELL,
  type HourlyRate,
  type Lesson,
  type SpikeAlert,
  type SpikeAlertReceipt,
  type SpikeSetting,
} from "./contract";
import { type FoldedTiers, floorTo } from "./folded-tiers";
import {
  type Baseline,
  baselineHours,
  baselineOf,
  canOpen,
  type EpisodeState,
  isIdle,
  judgeStep,
  NO_RECENT,
  newTrack,
  pushStep,
  type Recent,
  SENSITIVITY,
  SPIKE_STEP_MS,
  taughtBaseline,
  trailingRate,
  type Usage,
} from "./spike-detector";
import { SPIKE_WATCH_STATE, type WatchedTrack, type WatchState } from "./spike-watch-state";

const DEFAULT_SETTING: SpikeSetting = "medium";
/** After a long pause (the store asleep), only the latest buckets are judged: alerts about old news help no one. */
const CATCH_UP_MS = 2 * HOUR;
const HOSTS_KEPT = 50;
const SOURCES_NAMED = 5;

/**
 * Spike alerts where the traffic is: each folded 5-minute bucket's usage per sub-user is judged against the
 * sub-user's own baseline (`spike-detector.ts`, read from the hour tier), so detection costs a step per bucket,
 * nothing per request. An episode's start and end wait in an outbox, handed out by every ingest until the caller
 * confirms it recorded them (as client sources' alerts do). The state is one row, written when it changes, its shape
 * versioned (`spike-watch-state.ts`).
 */
export class SpikeWatch {
  readonly #sql: SqlStorage;
  readonly #state: WatchState;
  /** Per hour bucket read for baselines: usage per sub-user. */
  readonly #hours = new Map<number, Map<string, Usage>>();
  /** Whether an episode is open (asked after every ingest: kept, not counted each time). */
  #watching = false;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    const stored = sql
      .exec<{ body: string; version: number }>("SELECT body, version FROM spike_watch WHERE id = 1")
      .toArray()[0];
    this.#state = stored
      ? SPIKE_WATCH_STATE.read(stored)
      : { judgedTo: null, settings: {}, tracks: {}, outbox: [], lessons: {} };
    this.#watching = anyEpisode(this.#state.tracks);
  }

  /** The alerts not confirmed yet. */
  alerts(): SpikeAlert[] {
    return this.#state.outbox;
  }

  /** Whether an episode is open (the store keeps folding while one is, so that it can end without new usage). */
  watching(): boolean {
    return this.#watching;
  }

  confirm(receipts: SpikeAlertReceipt[]): void {
    const done = new Set(receipts.map((r) => `${r.spikeId}:${r.kind}`));
    const kept = this.#state.outbox.filter((alert) => !done.has(`${alert.spikeId}:${alert.kind}`));
    if (kept.length === this.#state.outbox.length) return;
    this.#state.outbox = kept;
    this.#save();
  }

  /** A sub-user's setting changed: `off` forgets its track (an open episode ends now). */
  configure(subuserId: string, setting: SpikeSetting, at: number): void {
    if (setting === DEFAULT_SETTING) delete this.#state.settings[subuserId];
    else this.#state.settings[subuserId] = setting;
    const track = this.#state.tracks[subuserId];
    if (setting === "off" && track) {
      if (track.episode) this.#raise("ended", subuserId, track, track.episode, at, null);
      delete this.#state.tracks[subuserId];
    }
    this.#watching = anyEpisode(this.#state.tracks);
    this.#save();
  }

  /**
   * A sub-user's episode was acknowledged as normal: its lesson raises the sub-user's baseline until it lapses, in
   * place of any earlier one. `null` undoes the lesson of episode `spikeId`, if it is still the sub-user's.
   */
  teach(subuserId: string, spikeId: string, lesson: Lesson | null): void {
    const known = this.#state.lessons[subuserId];
    if (lesson) this.#state.lessons[subuserId] = lesson;
    else if (known?.spikeId === spikeId) delete this.#state.lessons[subuserId];
    else return;
    this.#save();
  }

  /** Judges every bucket folded since the last call (up to the 5-minute watermark). */
  judge(tiers: FoldedTiers, sources: ClientSources): void {
    const to = tiers.watermark("5m");
    const from = Math.max(this.#state.judgedTo ?? 0, floorTo(to - CATCH_UP_MS, SPIKE_STEP_MS));
    if (from >= to) return;
    let judged = 0;
    for (let bucket = from; bucket < to; bucket += SPIKE_STEP_MS) judged += this.#judgeBucket(tiers, sources, bucket);
    this.#state.judgedTo = to;
    this.#watching = anyEpisode(this.#state.tracks);
    // Buckets with no one to judge change nothing worth a write (judging them again after a restart finds no one).
    if (judged > 0) this.#save();
  }

  /** Judges one bucket's sub-users (those with usage in it or a track); how many. */
  #judgeBucket(tiers: FoldedTiers, sources: ClientSources, bucket: number): number {
    const usage = bucketUsage(tiers, bucket);
    const ids = new Set([...Object.keys(this.#state.tracks), ...usage.keys()]);
    const samples = anyEpisode(this.#state.tracks) ? tiers.samples(bucket) : [];
    for (const subuserId of ids) {
      const setting = this.#state.settings[subuserId] ?? DEFAULT_SETTING;
      if (setting === "off") continue;
      const track = this.#state.tracks[subuserId] ?? {
        ...newTrack(),
        spikeId: null,
        sensitivity: setting,
        hosts: {},
        sampledBytes: 0,
      };
      pushStep(track, usage.get(subuserId) ?? [0, 0]);
      if (!track.episode) track.sensitivity = setting;
      const open = track.episode;
      const needsBaseline = track.episode !== null || canOpen(trailingRate(track), track.sensitivity);
      const hour = floorTo(bucket, HOUR);
      const outcome = needsBaseline
        ? judgeStep(
            track,
            bucket,
            this.#baseline(tiers, subuserId, hour, bucket),
            track.sensitivity,
            this.#recent(tiers, subuserId, hour),
          )
        : judgeStep(track, bucket, baselineOf([]), track.sensitivity, NO_RECENT);
      if (outcome === "opened" && track.episode) {
        track.spikeId = newIdAt("trafficSpike", track.episode.startedAt);
        track.hosts = {};
        track.sampledBytes = 0;
        tallyHosts(track, subuserId, this.#openingSamples(tiers, track.episode.startedAt, bucket));
        this.#raise("started", subuserId, track, track.episode, bucket + SPIKE_STEP_MS, sources);
      } else if (track.episode) {
        tallyHosts(track, subuserId, samples);
      } else if (outcome === "closed" && open) {
        this.#raise("ended", subuserId, track, open, bucket + SPIKE_STEP_MS, sources);
      }
      if (isIdle(track)) delete this.#state.tracks[subuserId];
      else this.#state.tracks[subuserId] = track;
    }
    return ids.size;
  }

  /** The samples of the buckets an episode opened over (those before the one that opened it too). */
  #openingSamples(tiers: FoldedTiers, from: number, bucket: number) {
    const found = [];
    for (let b = from; b <= bucket; b += SPIKE_STEP_MS) found.push(...tiers.samples(b));
    return found;
  }

  /** An episode's start or end into the outbox (`sources` null: its sub-user was turned off, none named). */
  #raise(
    kind: SpikeAlert["kind"],
    subuserId: string,
    track: WatchedTrack,
    episode: EpisodeState,
    at: number,
    sources: ClientSources | null,
  ): void {
    if (!track.spikeId) return;
    this.#state.outbox.push({
      kind,
      spikeId: track.spikeId,
      subuserId,
      sensitivity: track.sensitivity,
      startedAt: episode.startedAt,
      at,
      observed: hourly(episode.observed),
      baseline: { ...hourly(episode.baseline.rate), weeks: episode.baseline.weeks, days: episode.baseline.days },
      floor: hourly(SENSITIVITY[track.sensitivity].floor),
      peak: hourly(episode.peak),
      bytes: episode.total[0],
      requests: episode.total[1],
      sampledHosts: topHosts(track.hosts),
      sampledBytes: track.sampledBytes,
      topSources: sources ? sources.activeSince(subuserId, episode.startedAt, SOURCES_NAMED) : [],
    });
    if (kind === "ended") {
      track.spikeId = null;
      track.hosts = {};
      track.sampledBytes = 0;
    }
  }

  /**
   * The sub-user's baseline for an hour, from the hour tier's rows of the same hour ±1 in the past weeks (or days),
   * raised by its lesson while that runs at `at`.
   */
  #baseline(tiers: FoldedTiers, subuserId: string, hour: number, at: number): Baseline {
    this.#keepHours(hour);
    return taughtBaseline(this.#untaught(tiers, subuserId, hour), this.#lesson(subuserId, at), at);
  }

  #untaught(tiers: FoldedTiers, subuserId: string, hour: number): Baseline {
    const { weeks, days } = baselineHours(hour);
    const usage = (windows: number[][]) =>
      windows.map((hours) => hours.map((h): Usage => this.#hourUsage(tiers, h).get(subuserId) ?? [0, 0]));
    return baselineOf(usage(weeks), usage(days));
  }

  /**
   * What the hour tier says of the sub-user's last hours (`Recent`): its previous hour, and yesterday's window of
   * this hour (the baseline's first past day) with yesterday's own baseline there (no lesson: what it usually did).
   */
  #recent(tiers: FoldedTiers, subuserId: string, hour: number): Recent {
    const bytes = (h: number) => this.#hourUsage(tiers, h).get(subuserId)?.[0] ?? 0;
    const [yesterday = []] = baselineHours(hour).days;
    return {
      lastHour: bytes(hour - HOUR),
      yesterday: Math.max(...yesterday.map(bytes)),
      yesterdayUsual: this.#untaught(tiers, subuserId, hour - DAY).rate[0],
    };
  }

  /** Forgets cached hours that neither this hour's baseline nor its recent hours read (yesterday's baseline too). */
  #keepHours(hour: number): void {
    const wanted = new Set([hour - HOUR]);
    for (const of of [hour, hour - DAY]) {
      const { weeks, days } = baselineHours(of);
      for (const h of [...weeks.flat(), ...days.flat()]) wanted.add(h);
    }
    for (const cached of this.#hours.keys()) if (!wanted.has(cached)) this.#hours.delete(cached);
  }

  /** The sub-user's lesson, forgotten once it lapsed. */
  #lesson(subuserId: string, at: number): Lesson | undefined {
    const lesson = this.#state.lessons[subuserId];
    if (lesson && lesson.until <= at) delete this.#state.lessons[subuserId];
    return this.#state.lessons[subuserId];
  }

  #hourUsage(tiers: FoldedTiers, hour: number): Map<string, Usage> {
    let usage = this.#hours.get(hour);
    if (!usage) {
      usage = tiers.head("1h", hour) ? usageBySubuser(tiers.content("1h", hour).cells) : new Map();
      this.#hours.set(hour, usage);
    }
    return usage;
  }

  #save(): void {
    const { body, version } = SPIKE_WATCH_STATE.write(this.#state);
    this.#sql.exec(
      `INSERT INTO spike_watch (id, body, version) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET body = excluded.body, version = excluded.version`,
      body,
      version,
    );
  }
}

function anyEpisode(tracks: Record<string, WatchedTrack>): boolean {
  return Object.values(tracks).some((track) => track.episode !== null);
}

/** A folded 5-minute bucket's usage per sub-user (none when the bucket had no usage). */
function bucketUsage(tiers: FoldedTiers, bucket: number): Map<string, Usage> {
  return tiers.head("5m", bucket) ? usageBySubuser(tiers.content("5m", bucket).cells) : new Map();
}

function usageBySubuser(cells: ReturnType<FoldedTiers["content"]>["cells"]): Map<string, Usage> {
  const usage = new Map<string, Usage>();
  for (const cell of cells) {
    const id = cell[CELL.subuserId];
    const known = usage.get(id) ?? [0, 0];
    usage.set(id, [known[0] + cell[CELL.bytesIn] + cell[CELL.bytesOut], known[1] + cell[CELL.requests]]);
  }
  return usage;
}

/** Adds a sub-user's sampled requests to its episode's hosts, keeping the heaviest. */
function tallyHosts(track: WatchedTrack, subuserId: string, samples: ReturnType<FoldedTiers["samples"]>): void {
  let added = false;
  for (const sample of samples) {
    if (sample[LOGGED_SAMPLE.subuserId] !== subuserId) continue;
    const host = sample[LOGGED_SAMPLE.targetHost];
    const bytes = Math.max(1, sample[LOGGED_SAMPLE.bytes]);
    track.hosts[host] = (track.hosts[host] ?? 0) + bytes;
    track.sampledBytes += bytes;
    added = true;
  }
  if (added && Object.keys(track.hosts).length > HOSTS_KEPT)
    track.hosts = Object.fromEntries(topHosts(track.hosts).map((h) => [h.host, h.bytes]));
}

function topHosts(hosts: Record<string, number>): SpikeAlert["sampledHosts"] {
  return Object.entries(hosts)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, HOSTS_KEPT)
    .map(([host, bytes]) => ({ host, bytes }));
}

function hourly([bytes, requests]: Usage): HourlyRate {
  return { bytesPerHour: Math.round(bytes), requestsPerHour: Math.round(requests) };
}
