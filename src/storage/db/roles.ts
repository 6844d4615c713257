/** The PostgreSQL role the API runs as: it reads through row-level security and cannot bypass it (migration 0002). */
export const API_ROLE = 'secinv_api';
