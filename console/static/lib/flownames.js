// What a flow's settings can name, read for the flow editor: the labels (with their released
// versions), the stored secret credentials (an administrator's list, by reference only), the
// variables of the label a print node names, and the context parameters set where the flow runs.

import { get, listAll } from "./api.js";
import { can } from "./session.js";

/** Labels, credentials (an admin's list; never a secret) and the label variables print nodes
 * map, read once per editor. */
export function pickers() {
  const state = { labels: [], credentials: null };
  const variables = new Map();
  const loaded = Promise.all([
    listAll("/labels").then((labels) => {
      state.labels = labels.map((l) => [l.id, `${l.name}${l.released_version ? ` (released v${l.released_version})` : " (not released)"}`]);
      state.meta = new Map(labels.map((l) => [l.id, l]));
    }),
    can("admin")
      ? listAll("/credentials").then((items) => {
          state.credentials = items.filter((c) => c.kind === "secret").map((c) => [c.ref, `${c.ref} (secret, stored)`]);
        })
      : Promise.resolve(),
  ]).catch(() => {});
  return {
    loaded,
    choices: (current) => {
      const labels = [...state.labels];
      if (current && !labels.some(([value]) => value === current)) labels.push([current, current]);
      return { labels, credentials: state.credentials, aliases: "fe-aliases" };
    },
    async labelVariables(reference) {
      const [labelId, pinned] = String(reference).split("@");
      const version = pinned || state.meta?.get(labelId)?.released_version;
      const key = `${labelId}@${version || "latest"}`;
      if (!variables.has(key)) {
        variables.set(
          key,
          get(`/labels/${labelId}/document`, { version }).then((answer) =>
            (answer.document.variables || [])
              .filter((v) => !v.expression)
              .map((v) => ({ name: v.name, type: v.type, required: Boolean(v.required) && v.default == null, description: v.description })),
          ),
        );
      }
      return variables.get(key);
    },
  };
}

/** The context parameter names set where the flow is deployed: each live deployment's own and
 * its groups' (a Runner's own are not read: there may be many). Null when never deployed. */
export async function contextOf(flowId) {
  if (!can("designer", "operator")) return null;
  try {
    const deployments = (await listAll("/deployments", { flow_id: flowId }, 50)).filter((d) => !["rolled_back", "superseded"].includes(d.status));
    if (!deployments.length) return null;
    const groups = [...new Set(deployments.flatMap((d) => d.stages.flatMap((stage) => stage.group_ids)))].slice(0, 20);
    const lists = await Promise.all([
      ...deployments.slice(0, 10).map((d) => listAll(`/deployments/${d.id}/context`).catch(() => [])),
      ...groups.map((g) => listAll(`/runner-groups/${g}/context`).catch(() => [])),
    ]);
    return [...new Set(lists.flat().map((parameter) => parameter.name))].sort();
  } catch {
    return null;
  }
}
