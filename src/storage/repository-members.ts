import type { Repositories } from "../domain/store.js";

/**
 * What both stores extend: the port's Store is its repositories plus the unit of work, so a store's instance
 * carries the repositories it is given as its own members (one list, the port's, instead of one per back end).
 */
export const RepositoryMembers = class {
  constructor(repositories: Repositories) {
    Object.assign(this, repositories);
  }
} as unknown as new (
  repositories: Repositories,
) => Repositories;
