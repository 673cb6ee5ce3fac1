import type { Clock } from "../../src/domain/clock.js";

/** A clock tests can move forward; starts at the real time. */
export class TestClock implements Clock {
  private offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}
