// Types of build-dashboard.mjs for the tests that build the dashboard themselves.
export function buildDashboard(outdir?: string): Promise<{ outdir: string; files: Record<string, number> }>;
