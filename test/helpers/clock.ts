import type { Clock } from "../../src/domain/clock.js";

/** A clock tests can move forward, or stop at an exact instant; starts at the real time. */
export class TestClock implements Clock {
  private offset = 0;
  private frozen: number | undefined;
  now(): number {
    return this.frozen ?? Date.now() + this.offset;
  }
  advance(ms: number): void {
    if (this.frozen !== undefined) this.frozen += ms;
    else this.offset += ms;
  }
  /** Stops the clock at the instant `ms` (epoch milliseconds), for checks that hinge on one millisecond. */
  freezeAt(ms: number): void {
    this.frozen = ms;
  }
  /** Lets a frozen clock run on from where it stands. */
  resume(): void {
    if (this.frozen === undefined) return;
    this.offset = this.frozen - Date.now();
    this.frozen = undefined;
  }
}
