// The part of autocannon's API the fallback load generator uses (the package ships no types).
declare module "autocannon" {
  interface Options {
    url: string;
    connections: number;
    duration: number;
    requests: {
      method: string;
      path: string;
      headers?: Record<string, string>;
      body?: string;
      /** Rewrites each request before it is sent. */
      setupRequest?: (req: { headers?: Record<string, string> }) => { headers?: Record<string, string> };
    }[];
  }
  interface Result {
    duration: number;
    requests: { total: number };
    latency: { p50: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
