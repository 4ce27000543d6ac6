// Who is signed in (from getWhoami), and what the console may offer them. The API decides; the
// console only hides what would certainly be refused.

export const session = { user: null };

export function signedIn() {
  return session.user !== null;
}

/** Whether the caller holds one of `roles` (admin may do everything). */
export function can(...roles) {
  const held = (session.user && session.user.roles) || [];
  return held.includes("admin") || roles.some((role) => held.includes(role));
}

export function isHuman() {
  return Boolean(session.user && session.user.actor === "human");
}
