/** What a store's transaction hands to the handler: the part of node-postgres's client it types. */

/** What a query resolves to (a node-postgres `QueryResult` has these and more). */
export interface SqlResult<R = any> {
  readonly rows: R[];
  readonly rowCount: number | null;
}

/**
 * A connection that runs parameterised SQL. In `ctx.transaction` it is node-postgres's `PoolClient`:
 * annotate the parameter (`async (tx: PoolClient) => ...`) to use its full type.
 */
export interface SqlClient {
  query<R = any>(text: string, values?: unknown[]): Promise<SqlResult<R>>;
}
