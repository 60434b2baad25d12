// What of a request may be written to the log: its URL without credentials (an access token
// passed as ?token= to /auth/login, or any parameter named like a secret).
const SECRET_PARAM = /([?&](?:token|access_token|id_token|code|password|secret)=)[^&#]*/gi;

export function loggableUrl(url: string | undefined): string {
  return (url ?? '').slice(0, 2048).replace(SECRET_PARAM, '$1***');
}
