import { useEffect, useState } from "preact/hooks";
import { accounts, describeError } from "../api.js";

/**
 * Every person's Available / Away choice in the top bar: away, auto-assignment gives them no new conversation
 * (they keep what they hold). Read again whenever the window comes back to the front, so a choice made in another
 * tab shows here too; a refused change puts the choice back and says why.
 */
export function AvailabilityToggle() {
  const [away, setAway] = useState<boolean | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  useEffect(() => {
    const read = () =>
      void accounts.getMyAvailability({}).then(
        (r) => setAway(r.data?.away ?? false),
        () => undefined,
      );
    read();
    addEventListener("focus", read);
    return () => removeEventListener("focus", read);
  }, []);
  const change = async (next: boolean) => {
    const was = away;
    setAway(next);
    setBusy(true);
    setError("");
    try {
      const r = await accounts.setMyAvailability({ away: next });
      setAway(r.data?.away ?? next);
    } catch (e) {
      setAway(was);
      setError(`Availability not changed: ${describeError(e)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="availability">
      <label for="availability" class="sr-only">
        Your availability
      </label>
      <select
        id="availability"
        data-away={away === undefined ? undefined : String(away)}
        disabled={away === undefined || busy}
        value={away ? "away" : "available"}
        title={error || "Away: no new conversations are assigned to you"}
        onChange={(e) => void change(e.currentTarget.value === "away")}
      >
        <option value="available">Available</option>
        <option value="away">Away</option>
      </select>
      {error && (
        <span class="sr-only" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
