// How alive a session looks, from its last heartbeat and the project's beat interval.
//
// A session is expected to beat every `interval`. Its next beat is due at last + interval;
// it is *stale* once that beat is more than two intervals late (no beat for three
// intervals), and *timing out* once its TTL has run out and the expiry job has not yet
// ended it. Jitter of a beat or a poll never makes a healthy agent look stale.

export const LATE_INTERVALS = 2;

export function parseTimes(session) {
  session._last = Date.parse(session.last_heartbeat_at);
  session._expires = Date.parse(session.expires_at);
}

/** "fresh" | "stale" | "expiring", and the heartbeat age in ms. */
export function liveness(session, now, intervalMs) {
  if (session._last === undefined) parseTimes(session);
  const age = Math.max(0, now - session._last);
  if (now >= session._expires) return { state: "expiring", age };
  const interval = intervalMs || Math.max(1000, (session._expires - session._last) / 4);
  const late = age - interval;
  return { state: late > LATE_INTERVALS * interval ? "stale" : "fresh", age };
}
