import { defineTool } from 'agentport-mcp';
import { z } from 'zod';

// An example data source; a real tool would call the shop's API here.
const ORDERS: Record<string, { status: string; eta?: string }> = {
  'A-1001': { status: 'shipped', eta: '2 days' },
  'A-1002': { status: 'processing' },
  'A-1003': { status: 'delivered' },
};

/** Tool name: `lookup_order`, from the file name. */
export default defineTool({
  description: 'Look up the status of an order by its order number (for example A-1001).',
  args: z.object({
    order_id: z.string().describe('The order number, like A-1001'),
  }),
  execute: async (_state, args) => {
    const order = ORDERS[args.order_id.toUpperCase()];
    if (!order) return { status: 'error', error: `No order ${args.order_id}. Ask the customer to check the number.` };
    return { status: 'success', result: JSON.stringify({ order_id: args.order_id, ...order }) };
  },
});
