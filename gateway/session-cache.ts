// Sticky sessions at the node: asked of the API once per session (one pin across nodes), kept until they expire
// or a push ends them.
import type { ApiClient } from "./api-client.ts";
import { type Clock, realClock } from "./clock.ts";
import type { StickySession } from "./wire.ts";

export class StickySessions {
  #api: Pick<ApiClient, "session">;
  #clock: Clock;
  #byKey = new Map<string, StickySession>();
  #asking = new Map<string, Promise<StickySession>>();

  constructor({ api, clock = realClock }: { api: Pick<ApiClient, "session">; clock?: Clock }) {
    this.#api = api;
    this.#clock = clock;
  }

  /** The session of `username`; rejects when the API cannot be asked. */
  async get({ name, username, exitIp }: { name: string; username: string; exitIp: string }): Promise<StickySession> {
    const key = username.toLowerCase();
    const known = this.#byKey.get(key);
    if (known && Date.parse(known.expires_at) > this.#clock.now()) return known;
    let asking = this.#asking.get(key);
    if (!asking) {
      asking = this.#api
        .session({ name, username, exitIp })
        .then(({ session }) => {
          this.#byKey.set(key, session);
          return session;
        })
        .finally(() => this.#asking.delete(key));
      this.#asking.set(key, asking);
    }
    return asking;
  }

  /** A push ended a session: the next request of its username asks for a new one. */
  end(sessionId: string): void {
    for (const [key, session] of this.#byKey) if (session.id === sessionId) this.#byKey.delete(key);
  }

  /** The upstream network moved a session's exit (the usage record says so; the API moves its pin from it). */
  repinned(sessionId: string, exitIp: string): void {
    for (const session of this.#byKey.values()) if (session.id === sessionId) session.exit_ip = exitIp;
  }

  /** Forgets expired sessions. */
  sweep(): void {
    const now = this.#clock.now();
    for (const [key, session] of this.#byKey) if (Date.parse(session.expires_at) <= now) this.#byKey.delete(key);
  }
}
